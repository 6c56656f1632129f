import { Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: a random id written by its migration, never changed. With the database's oid it names
 * this database to state kept outside it (the Redis rank index: docs/decisions.md "A Redis index
 * bound to its database"). A restore carries it; a database created afresh gets another.
 */
@Entity({ name: 'database_identity' })
export class DatabaseIdentityEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'PK_database_identity' })
  id!: string;
}
