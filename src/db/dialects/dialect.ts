// The two stores edgeplane runs on.
export type Dialect = 'sqlite' | 'postgres';
