// api/gpu-count.ts: how many of the GPUs listed pay for themselves. The two sizes measured on 4 H200s
// (bench/results/2026-11-27-h200x4-r3d.json) are the fixed points: 10M x 128 with 16,384 anchors ran
// slower on four GPUs than on one, 50M x 128 with 65,536 anchors faster.
import { describe, expect, it } from 'vitest';
import { gpusThatPay, predictedSeconds } from '../../dist/api/gpu-count.js';

const work = (n: number, m: number) => ({ n, d: 128, m, sampleRows: Math.min(n, 256 * m), iterations: 12, elementBytes: 2 });

describe('gpusThatPay', () => {
  it('10,000,000 x 128 f16, 16,384 anchors: one GPU of four', () => {
    expect(gpusThatPay(4, work(10_000_000, 16_384)).count).toBe(1);
  });

  it('50,000,000 x 128 f16, 65,536 anchors: all four', () => {
    const { count, predicted } = gpusThatPay(4, work(50_000_000, 65_536));
    expect(count).toBe(4);
    expect(predicted[3]).toBeLessThan(predicted[0] * 0.7);
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

  it('each GPU beyond the first costs time that grows with the sample it gathers', () => {
    const tiny = { ...work(1000, 10), iterations: 0 };
    expect(predictedSeconds(2, tiny)).toBeGreaterThan(predictedSeconds(1, tiny));
    expect(predictedSeconds(3, tiny) - predictedSeconds(2, tiny)).toBeCloseTo(predictedSeconds(2, tiny) - predictedSeconds(1, tiny), 6);
  });
});
