/** The contract shared by edge and origin: error codes, ids, signing, trace context, shapes. */
export * from './errors.js';
export * from './refusals.js';
export * from './ids.js';
export * from './signing.js';
export * from './trace.js';
export * from './activity.js';
export * from './reservation.js';
export * from './reserve-outcomes.js';
export * from './product.js';
export * from './eligibility.js';
export * from './shadow.js';
export * from './edge-figures.js';
