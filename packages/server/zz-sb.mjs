import pino from 'pino';
const mode = process.argv[2];
const d = pino.destination({ dest: 1, sync: false, maxLength: 64 * 1024 * 1024, minLength: 4096, ...(mode.includes('p') ? { periodicFlush: 200 } : {}) });
const log = pino({}, d);
log.info('one');
if (mode.includes('f')) d.flush();
setTimeout(() => { log.info('two'); if (mode.includes('f')) d.flush(); }, 500);
setTimeout(() => process.exit(0), 1500);
