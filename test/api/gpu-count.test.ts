// api/gpu-count.ts: how many of the GPUs listed pay for themselves. The sizes measured on 4 H200s
// (bench/results/2026-11-27-h200x4-r3f.json) are the fixed points: 10M x 128 with 16,384 anchors
// ran fastest on two GPUs (10.0 s; one 10.1, four 11.2), 50M x 128 with 65,536 anchors on four.
import { describe, expect, it } from 'vitest';
import { gpusThatPay, predictedSeconds } from '../../dist/api/gpu-count.js';

const work = (n: number, m: number, iterations = 50) => ({ n, d: 128, m, sampleRows: Math.min(n, 256 * m), iterations });

describe('gpusThatPay', () => {
  it('1,000,000 x 128, 4,096 anchors: one GPU of four', () => {
    expect(gpusThatPay(4, work(1_000_000, 4_096)).count).toBe(1);
  });

  it('10,000,000 x 128, 16,384 anchors: two of four', () => {
    expect(gpusThatPay(4, work(10_000_000, 16_384)).count).toBe(2);
  });

  it('50,000,000 x 128, 65,536 anchors: all four, with 10 iterations or 50', () => {
    for (const iterations of [10, 50]) {
      const { count, predicted } = gpusThatPay(4, work(50_000_000, 65_536, iterations));
      expect(count).toBe(4);
      expect(predicted[3]).toBeLessThan(predicted[0] * 0.6);
    }
  });

  it('the count never falls as the work grows, and a list of one is one', () => {
    let last = 1;
    for (const n of [1e5, 1e6, 5e6, 2e7, 5e7, 2e8, 1e9]) {
      const { count } = gpusThatPay(4, work(n, 65_536));
      expect(count).toBeGreaterThanOrEqual(last);
      last = count;
    }
    expect(last).toBe(4);
    expect(gpusThatPay(1, work(1e9, 65_536)).count).toBe(1);
  });

  it('each GPU beyond the first costs the same fixed time', () => {
    const tiny = { ...work(1000, 10), iterations: 0 };
    expect(predictedSeconds(2, tiny)).toBeGreaterThan(predictedSeconds(1, tiny));
    expect(predictedSeconds(3, tiny) - predictedSeconds(2, tiny)).toBeCloseTo(predictedSeconds(2, tiny) - predictedSeconds(1, tiny), 6);
  });
});
