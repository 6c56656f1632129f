import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A season's row keeps whom its close rule granted (board_period.granted_uids), written by the
 * freeze that grants. An early close by staff now closes in one transaction and freezes in
 * another, so that uploads wait only for the close (docs/decisions.md "Seasons: staff and the close
 * rule"); its answer reads the grant from the row, the same whichever instance froze the season.
 * An expand step: a nullable column the previous release neither reads nor writes. Written by hand.
 */
export class SeasonGrantedUids1795888000000 implements MigrationInterface {
  name = 'SeasonGrantedUids1795888000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "board_period" ADD "granted_uids" bigint array`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "board_period" DROP COLUMN "granted_uids"`);
  }
}
