// The child process of `codehost/testing/child` (src/testing-child.js), run on codehost's pinned
// Node: the in-process helper, driven over the IPC channel. `start` starts it and answers its
// members (values and the names of its calls); any other message calls one; the channel closing
// (the parent's stop(), or the parent gone) stops the server and ends this process.
const { startCodehost } = await import('./testing-entry.js');

let started = null;
const answer = (id, run) => {
  const send = (message) => process.connected && process.send(message);
  Promise.resolve().then(run).then(
    (value) => send({ id, value: value === undefined ? null : value }),
    (error) => send({ id, error: (error && error.message) || String(error) }),
  );
};

process.on('message', ({ id, member, args }) => {
  if (member === 'start') {
    answer(id, async () => {
      started = startCodehost(...args);
      const codehost = await started;
      const members = Object.entries(codehost);
      return {
        values: Object.fromEntries(members.filter(([, value]) => typeof value !== 'function')),
        calls: members.filter(([, value]) => typeof value === 'function').map(([name]) => name),
      };
    });
  } else {
    answer(id, async () => {
      const codehost = await started;
      if (!codehost || typeof codehost[member] !== 'function') throw new Error(`codehost: no helper call named ${member}`);
      return codehost[member](...args);
    });
  }
});

process.on('disconnect', async () => {
  const codehost = await (started || Promise.resolve(null)).catch(() => null);
  if (codehost) await codehost.stop();
  process.exit(0);
});
