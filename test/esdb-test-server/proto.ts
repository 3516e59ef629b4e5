/**
 * The generated protobuf and service code the test server speaks, loaded from
 * @eventstore/db-client's own `generated/` directory, with grpc-js and google-protobuf resolved
 * from there too: the serializers and `instanceof` checks must all see the same module instances
 * (and this must not share a process with another generated set, see ESDB-WIRE pitfalls).
 */
import { createRequire } from 'node:module';
import type * as GrpcModule from '@grpc/grpc-js';
import type * as StreamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb';
import type * as StreamsPb from '@eventstore/db-client/generated/streams_pb';
import type * as SharedPb from '@eventstore/db-client/generated/shared_pb';
import type * as StatusPb from '@eventstore/db-client/generated/status_pb';
import type * as FeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import type * as FeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb';
import type * as AnyPb from 'google-protobuf/google/protobuf/any_pb';
import type * as EmptyPb from 'google-protobuf/google/protobuf/empty_pb';
import type * as JspbModule from 'google-protobuf';
import type * as TimestampPb from 'google-protobuf/google/protobuf/timestamp_pb';

/** `require` as if from inside the client's `generated/` directory. */
const fromGenerated = createRequire(require.resolve('@eventstore/db-client/generated/streams_grpc_pb'));

export const grpc = fromGenerated('@grpc/grpc-js') as typeof GrpcModule;
export const { StreamsService, StreamsClient } = fromGenerated('./streams_grpc_pb') as typeof StreamsGrpc;
export const { ServerFeaturesService, ServerFeaturesClient } = fromGenerated(
  './serverfeatures_grpc_pb',
) as typeof FeaturesGrpc;
export const pb = fromGenerated('./streams_pb') as typeof StreamsPb;
export const shared = fromGenerated('./shared_pb') as typeof SharedPb;
export const status = fromGenerated('./status_pb') as typeof StatusPb;
export const features = fromGenerated('./serverfeatures_pb') as typeof FeaturesPb;
export const anyPb = fromGenerated('google-protobuf/google/protobuf/any_pb.js') as typeof AnyPb;
export const emptyPb = fromGenerated('google-protobuf/google/protobuf/empty_pb.js') as typeof EmptyPb;
export const timestampPb = fromGenerated('google-protobuf/google/protobuf/timestamp_pb.js') as typeof TimestampPb;
export const jspb = fromGenerated('google-protobuf') as typeof JspbModule;

export type { GrpcModule, StreamsGrpc, StreamsPb, SharedPb, FeaturesPb };

/** grpc status codes used here (numeric, as on the wire). */
export const Code = {
  OK: 0,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
} as const;
