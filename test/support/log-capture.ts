/** A pino destination that keeps every line the app writes, for asserting on logs. */
export class LogCapture {
  readonly lines: string[] = [];

  write(chunk: string): void {
    for (const line of chunk.split('\n')) if (line.length > 0) this.lines.push(line);
  }

  /** Every line parsed; throws on a line that is not one JSON object. */
  records(): Array<Record<string, any>> {
    return this.lines.map((line) => {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error(`not a JSON object: ${line}`);
      return parsed as Record<string, any>;
    });
  }

  /** The completion line of the request with this id. */
  requestLine(requestId: string): Record<string, any> | undefined {
    return this.records().find(
      (record) =>
        record.reqId === requestId &&
        typeof record.status === 'number' &&
        record.msg !== undefined &&
        record.route !== undefined &&
        record.durationMs !== undefined,
    );
  }
}
