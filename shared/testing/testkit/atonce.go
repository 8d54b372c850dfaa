package testkit

import "sync"

// AtOnce runs f(0) … f(n-1) in n goroutines released together, and
// returns when all have returned: n requests sent at once.
func AtOnce(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}
