import { Writable } from 'node:stream';

/** Collects what a logger writes, as written (JSON lines, or pino-pretty's lines). */
export class LogCapture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
  /** The JSON lines written so far, each read as `Line`. */
  lines<Line = Record<string, unknown>>(): Line[] {
    return this.text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Line);
  }
}
