package sessions

import "time"

// SetClock makes d read the time from now (tests).
func (d *Idle) SetClock(now func() time.Time) { d.now = now }
