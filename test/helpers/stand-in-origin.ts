/** The stand-in origin lives with the benchmarks that also use it (bench/lib/stand-in-origin.ts). */
export * from '../../bench/lib/stand-in-origin.js';
