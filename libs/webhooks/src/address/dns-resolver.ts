import { lookup } from 'node:dns/promises';
import type { Resolver } from './address-guard';

/** The system resolver (getaddrinfo, so /etc/hosts counts), every address of the name. */
export const systemResolver: Resolver = async (host) => {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};
