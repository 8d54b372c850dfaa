// dynalite's command line, kept up when a client aborts a request: dynalite
// 4.0.0 rethrows a request's 'error' event (index.js), so one client that
// closes its connection mid-request (a function process killed, a context
// cancelled) would end the server and with it every later test's sessions.
// Such an abort is logged and ignored; any other error still ends the
// process, as before.
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error('dynalite: a client aborted a request (ignored):', err.message)
    return
  }
  console.error(err)
  process.exit(1)
})
require('./node_modules/dynalite/cli.js')
