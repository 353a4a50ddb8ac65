-- The table of the postgres scenario (benchmarks/run.sh creates it once; the servers only read it).
DROP TABLE IF EXISTS items;
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
INSERT INTO items SELECT x, 'item-' || x FROM generate_series(1, 1000) AS x;
