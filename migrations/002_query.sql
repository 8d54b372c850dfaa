-- Query-side indexes (channel window, aux closure, discovery). Owned by the query engine.
SELECT 1;
