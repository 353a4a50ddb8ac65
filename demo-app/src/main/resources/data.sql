-- Sample orders; the two old pending ones are expired by the background job on its first run.
INSERT INTO orders (customer, item, quantity, status, created_at) VALUES
  ('ada',    'keyboard', 1, 'CONFIRMED', CURRENT_TIMESTAMP - INTERVAL '2' DAY),
  ('grace',  'monitor',  2, 'PENDING',   CURRENT_TIMESTAMP - INTERVAL '1' DAY),
  ('linus',  'mouse',    3, 'PENDING',   CURRENT_TIMESTAMP - INTERVAL '3' HOUR),
  ('barbara','laptop',   1, 'PENDING',   CURRENT_TIMESTAMP),
  ('ken',    'cable',   10, 'CONFIRMED', CURRENT_TIMESTAMP);
