package sqlstore

import "context"

// exec runs fn in one transaction (Backend.Write), unless refused, the
// refusal of the method's arguments by their checks, is not nil: then it
// returns it and nothing runs. fn returns its errors as they are: exec
// wraps every error once, with the backend's name and op.
func (s *Store) exec(ctx context.Context, op string, refused error, fn func(tx Tx) error) error {
	if refused != nil {
		return s.db.Fail(op, refused)
	}
	return s.db.Write(ctx, op, func(tx Tx) error { return s.failIf(op, fn(tx)) })
}

// write is exec for a method that returns what fn returns.
func write[T any](ctx context.Context, s *Store, op string, refused error, fn func(tx Tx) (T, error)) (T, error) {
	var v T
	err := s.exec(ctx, op, refused, func(tx Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	return valueOf(v, err)
}

// read runs fn in Backend.Read and returns what it returns, with errors
// wrapped as exec wraps them.
func read[T any](ctx context.Context, s *Store, op string, fn func(tx Tx) (T, error)) (T, error) {
	var v T
	err := s.db.Read(ctx, op, func(tx Tx) error {
		var err error
		v, err = fn(tx)
		return s.failIf(op, err)
	})
	return valueOf(v, err)
}

// valueOf returns v, or the zero value with err: a method that fails
// returns nothing half made.
func valueOf[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// failIf wraps err, unless nil, with the backend's name and op.
func (s *Store) failIf(op string, err error) error {
	if err == nil {
		return nil
	}
	return s.db.Fail(op, err)
}

// pageOf returns rows, never nil, cut to limit, and whether a row was cut:
// the methods that page read one row more than the page, to know whether
// another follows.
func pageOf[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return append([]T{}, rows...), false
}

// readPage reads one page of a list in Backend.Read, unless refused, the
// refusal of the method's arguments, is not nil. fn reads at most limit
// rows, and is asked for one more than the page, to know whether another
// follows.
func readPage[T any](ctx context.Context, s *Store, op string, refused error, limit int, fn func(tx Tx, limit int) ([]T, error)) ([]T, bool, error) {
	if refused != nil {
		return nil, false, s.db.Fail(op, refused)
	}
	var more bool
	rows, err := read(ctx, s, op, func(tx Tx) ([]T, error) {
		rows, err := fn(tx, limit+1)
		var page []T
		page, more = pageOf(rows, limit)
		return page, err
	})
	return rows, more && err == nil, err
}
