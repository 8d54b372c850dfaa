// Waiting, as every script of this folder waits for the relay.

// sleep resolves after ms milliseconds.
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// until polls cond every 20 ms and throws 'timeout: ' + what after ms.
export const until = async (cond, ms, what) => {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout: ' + what)
    await sleep(20)
  }
}
