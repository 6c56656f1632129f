/**
 * Imported by test/support/service-process.ts right after the stop signals are installed, before
 * the service's modules load: tells the parent that a SIGTERM from now on is the service's to handle.
 */
process.send?.({ type: 'catching-signals' });
