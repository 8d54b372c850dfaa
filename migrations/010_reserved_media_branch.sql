-- Placeholder on the media branch only: migration 010 belongs to another
-- branch; tern needs the numbers without a gap. Drop this file at merge in
-- favour of that branch's 010.
SELECT 1;
