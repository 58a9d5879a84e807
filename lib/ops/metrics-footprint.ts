// Loads prom-client without evaluating, in Node, what it brings along and the service does not
// run (memory). Import this module before prom-client.
import { deferModule } from '../internals/node';

/**
 * prom-client's CPU counters require the OpenTelemetry API at load, and read it only to attach
 * exemplars (trace ids) to samples, which the service does not enable: 65 KB of source and about
 * 0.5 MB of heap for code that never runs here. Evaluated if ever used, not at start.
 */
deferModule('@opentelemetry/api');
