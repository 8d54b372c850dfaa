package community

// Opens is how many keys this instance has decrypted (for the tests that
// count them).
func (k *Keys) Opens() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.opens
}
