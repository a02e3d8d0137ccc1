// A webhook receiver in a process of its own (the benchmark's load must not share its event loop),
// driven by messages: the module that forks it answers `ask(message)` with `{[message]: value}`.
import { fork, type ChildProcess } from 'node:child_process';

export class ChildReceiver {
  readonly child: ChildProcess;
  port = 0;
  /** Forks `modulePath` with `flag`, which that module takes as "be the receiver". */
  constructor(modulePath: string, flag: string) {
    this.child = fork(modulePath, [flag], { execArgv: ['--disable-warning=ExperimentalWarning'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }
  /** Sends `message` and resolves with the value of the answer's `message` key. */
  ask<T>(message: string): Promise<T> {
    return new Promise((resolve) => {
      const on = (m: Record<string, unknown>) => {
        if (message in m) {
          this.child.off('message', on);
          resolve(m[message] as T);
        }
      };
      this.child.on('message', on);
      this.child.send(message);
    });
  }
  async ready(): Promise<void> {
    this.port = await new Promise<number>((resolve) => this.child.once('message', (m: { port: number }) => resolve(m.port)));
  }
  reset(): Promise<void> {
    return this.ask('reset');
  }
  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.send('stop');
    });
  }
}
