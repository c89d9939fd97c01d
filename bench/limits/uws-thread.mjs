// One thread of the bare uWS limit: an App answering GET `path` with fixed bytes and the service's
// headers for it (Content-Type, Vary), nothing else: no router, no logging, no request snapshot.
import { parentPort, workerData } from 'node:worker_threads';
import uWS from '@trufflesuite/uws-js-unofficial';

const { port, path, body } = workerData;
const app = uWS.App();
app.get(path, (res) => {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('Vary', 'Origin');
    res.writeHeader('Content-Type', 'application/json');
    res.end(body);
  });
});
let listening = null;
app.listen('127.0.0.1', port, (socket) => {
  listening = socket;
  parentPort.postMessage(socket ? { type: 'listening' } : { type: 'failed' });
});
// Close everything before the thread ends: a thread with live uWS handles aborts the process.
parentPort.once('message', () => {
  if (listening) uWS.us_listen_socket_close(listening);
  app.close();
  parentPort.close();
});
