import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

@Injectable()
export class ReadinessRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Writes the probe row (committed): a pooled connection works and the database takes writes. */
  async probeWrite(): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO readiness_probe (id, probed_at) VALUES (1, now())
       ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at`,
    );
  }
}
