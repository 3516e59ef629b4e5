import { healthFacts } from './endpoint-health.view';

const since = '2026-11-22T10:00:00.000Z';
const health = { delivered: 0, failed: 2, failingSince: since, lastDelivery: { status: 'failed', at: since } };

describe("the endpoint list's health facts", () => {
  it('warns about an endpoint whose attempts have all failed for WEBHOOK_FAILING_AFTER', () => {
    const text = String(healthFacts({ ...health, failingLong: true }));
    expect(text).toContain(
      '<dt>Warning</dt><dd class="warning" role="status"><strong>Every delivery attempt has failed since',
    );
    expect(text).toContain(`<time datetime="${since}">`);
  });

  it('says nothing more for a shorter streak, or none', () => {
    expect(String(healthFacts({ ...health, failingLong: false }))).not.toContain('Warning');
    expect(String(healthFacts(undefined))).not.toContain('Warning');
  });
});
