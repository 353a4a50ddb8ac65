-- The table of the mariadb scenario (benchmarks/run.sh creates it once; the servers only read it).
DROP TABLE IF EXISTS items;
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
INSERT INTO items SELECT seq, CONCAT('item-', seq) FROM seq_1_to_1000;
