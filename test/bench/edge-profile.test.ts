import { describe, expect, it } from 'vitest';
import { summarize, type CpuProfile } from '../../bench/edge-profile.js';

const frame = (functionName: string, lineNumber = 0) => ({ functionName, url: 'file:///x/edge.mjs', lineNumber });

describe('edge profile summary', () => {
  it('gives each function its self time and, counted once per stack, its inclusive time', () => {
    // root → handler → verify (3 ms), root → handler (1 ms), root → handler → handler (recursion) (4 ms), root → (idle) (2 ms)
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 5] },
        { id: 2, callFrame: frame('handler', 10), children: [3, 4] },
        { id: 3, callFrame: frame('verify', 20) },
        { id: 4, callFrame: frame('handler', 10) },
        { id: 5, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
      ],
      samples: [3, 2, 4, 5, 3],
      timeDeltas: [1000, 1000, 4000, 2000, 2000],
      startTime: 0,
      endTime: 10_000,
    };
    const { self, inclusive } = summarize(profile);
    expect(Object.fromEntries(self)).toEqual({
      'handler edge.mjs:11': 0.5,
      'verify edge.mjs:21': 0.3,
      '(idle) :0': 0.2,
    });
    const inc = Object.fromEntries(inclusive);
    expect(inc['(root) :0']).toBe(1);
    expect(inc['handler edge.mjs:11']).toBe(0.8); // 3 + 1 + 4 ms: the recursive frame is not counted twice
    expect(inc['verify edge.mjs:21']).toBe(0.3);
    expect(self[0]![0]).toBe('handler edge.mjs:11');
  });
});
