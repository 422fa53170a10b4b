package upstream

// CallsDirect reports whether s's live session calls tools without the
// SDK's client (callDirect).
func CallsDirect(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess != nil && s.sess.direct != nil
}
