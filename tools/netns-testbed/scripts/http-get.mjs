// Prints the body of one HTTP GET (bounded by a timeout); exit status 1 on failure.
// Usage: http-get.mjs <url> [timeoutMs]
import console from 'node:console';
import { get } from 'node:http';
import process from 'node:process';

const [url, timeoutMs = '5000'] = process.argv.slice(2);
const request = get(url, { timeout: Number(timeoutMs) }, (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => console.log(body));
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', (error) => {
  console.log(`error ${error.message}`);
  process.exitCode = 1;
});
