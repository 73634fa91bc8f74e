// The code cache's build run: the paths of jest that a grading takes, passing and failing (a stub's tests fail
// with its error and a code frame, a canary through expect), so their modules and functions are compiled.
import add, { Sample, later } from './sample';

describe('Sample', () => {
  let sample;
  beforeEach(() => {
    sample = new Sample(21);
  });

  test('passes', () => {
    expect(sample.twice()).toBe(42);
    expect(add(1, 2)).toEqual(3);
    expect({ a: [1, 2], b: 'x' }).toEqual({ a: [1, 2], b: 'x' });
    expect(0.1 + 0.2).toBeCloseTo(0.3);
    expect(() => sample.missing()).toThrow(new Error('Remove this statement and implement this function'));
    expect('abc').toMatch(/b/);
    expect(sample).not.toBe(null);
    const fn = jest.fn();
    fn(1);
    expect(fn).toHaveBeenCalledWith(1);
  });

  test('resolves', async () => {
    await expect(later(5)).resolves.toEqual(5);
    await expect(Promise.reject(new Error('no'))).rejects.toThrow('no');
  });

  test.each([[1, 2], [2, 4]])('each %i', (a, b) => {
    expect(new Sample(a).twice()).toBe(b);
  });

  xtest('fails with the solution error', () => {
    expect(sample.missing()).toEqual(1);
  });

  xtest('fails an equality', () => {
    expect({ a: [1, 2], b: 'x' }).toEqual({ a: [1, 3], b: 'y' });
  });

  xtest('fails a toBe', () => {
    expect(add(1, 1)).toBe(3);
  });

  xtest('fails a toThrow', () => {
    expect(() => add(1, 1)).toThrow('never');
  });

  test('fails through expect, its error rewritten', () => {
    try {
      expect('a').toBe('a ');
    } catch (error) {
      error.message = 'canary';
      error.stack = 'canary';
      throw error;
    }
  });
});
