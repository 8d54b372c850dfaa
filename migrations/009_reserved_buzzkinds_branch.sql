-- Placeholder so that this branch's 010_buzz_kinds.sql has a contiguous
-- predecessor (tern needs one): version 009 is issue 28's (009_nip29.sql).
-- Drop this file when merging that branch.
SELECT 1;
