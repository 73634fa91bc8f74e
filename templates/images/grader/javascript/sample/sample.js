// A stand-in exercise for the code cache's build run: a solution module in the exercises' own form.
export class Sample {
  constructor(value) {
    this.value = value;
  }

  twice() {
    return this.value * 2;
  }

  missing() {
    throw new Error('Remove this statement and implement this function');
  }
}

export const later = (value) => new Promise((resolve) => setTimeout(() => resolve(value), 1));

export default function add(a, b) {
  return a + b;
}
