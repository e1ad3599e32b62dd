/** Runs the real `tollgate` command (bin/tollgate.js over the built dist/) as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/tollgate.js', import.meta.url));

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tollgate ${args.join(' ')} did not exit; stdout: ${stdout} stderr: ${stderr}`));
    }, options.timeoutMs ?? 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop: () => Promise<number | null>;
}

/** Starts `tollgate serve ...` and resolves once it prints its listening address. */
export function serveCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const collect = (d: Buffer): void => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+) /.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({
          child,
          url: match[1] as string,
          output: () => out,
          stop: () =>
            new Promise((done) => {
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('exit', (code) => reject(new Error(`tollgate serve exited with ${code}: ${out}`)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tollgate serve did not start: ${out}`));
    }, 15_000);
  });
}
