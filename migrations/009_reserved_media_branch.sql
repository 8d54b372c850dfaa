-- Placeholder on the media branch only: migration 009 belongs to another
-- branch; tern needs the numbers without a gap. Drop this file at merge in
-- favour of that branch's 009.
SELECT 1;
