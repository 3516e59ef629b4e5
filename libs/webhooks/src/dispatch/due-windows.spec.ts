import { DueWindows } from './due-windows';

describe("due windows: a replay's deliveries wait behind live ones", () => {
  it('puts a live delivery scheduled into a complete window before the replay ones', () => {
    const windows = new DueWindows();
    windows.fill('E', ['live-1', 'replay-1', 'replay-2'], true, ['replay-1', 'replay-2']);
    windows.scheduled('live-2', 'E');
    windows.scheduled('replay-3', 'E', true);
    expect([...windows.get('E', 1)!]).toEqual(['live-1', 'live-2', 'replay-1', 'replay-2', 'replay-3']);
    expect(windows.isReplay('replay-3')).toBe(true);
    expect(windows.isReplay('live-2')).toBe(false);
  });

  it('drops a cut-off window of replay deliveries when a live one comes, so the next read lists it first', () => {
    const windows = new DueWindows();
    windows.fill('E', ['replay-1', 'replay-2'], false, ['replay-1', 'replay-2']);
    windows.scheduled('live-1', 'E');
    expect(windows.get('E', 1)).toBeUndefined();
    expect(windows.isReplay('replay-1')).toBe(false);
  });

  it('forgets that an id was a replay once it is taken', () => {
    const windows = new DueWindows();
    windows.fill('E', ['replay-1'], true, ['replay-1']);
    windows.take('replay-1');
    expect(windows.isReplay('replay-1')).toBe(false);
  });
});
