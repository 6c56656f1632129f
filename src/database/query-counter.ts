/**
 * Statements this instance sent to the database: one per round trip of node-postgres (`BEGIN` and
 * `COMMIT` included), counted on the pool's connections. Read by the metrics
 * (`rhythmc_db_queries_total`); the login-burst benchmark divides it by the players it logged in.
 */
export class QueryCounter {
  queries = 0;
}
