/**
 * For the profilers' tests: `use` runs with the inspector port of a Node process running
 * `script`, started with `--inspect`; the process is killed when `use` ends, however it ends.
 */
export async function withInspected<T>(script: string, use: (port: number) => Promise<T>): Promise<T> {
  const { port, child } = await startInspected(script);
  try {
    return await use(port);
  } finally {
    child.kill('SIGKILL');
  }
}

/** A Node process running `script`, started with `--inspect`, resolved once its inspector listens. */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './processes.js';

async function startInspected(script: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [`--inspect=127.0.0.1:${port}`, '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    // The inspector's address is printed once it listens.
    await new Promise<void>((resolve, reject) => {
      let text = '';
      child.stderr?.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('Debugger listening')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${text}`)));
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return { port, child };
}
