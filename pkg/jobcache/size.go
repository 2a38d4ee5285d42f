package jobcache

import "reflect"

// Size returns the approximate number of heap bytes v holds, in bytes: the
// size of v's own type plus everything reachable from it through pointers,
// slices (their capacity), strings (their length), maps (keys and values,
// without the map's buckets and overhead) and interfaces, each pointer's
// target counted once. Shared string data and memory behind funcs, channels
// and unsafe pointers are not followed. It reads unexported fields, so that
// a plan's private state is counted; it is meant for cache accounting, not
// exact, and errs on the side of counting shared string bytes twice.
func Size(v any) int64 {
	if v == nil {
		return 0
	}
	rv := reflect.ValueOf(v)
	s := sizer{seen: map[uintptr]bool{}}
	return int64(rv.Type().Size()) + s.inner(rv)
}

type sizer struct {
	seen map[uintptr]bool
}

// inner returns the bytes v refers to beyond its own type's size.
func (s *sizer) inner(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer:
		if v.IsNil() || s.seen[v.Pointer()] {
			return 0
		}
		s.seen[v.Pointer()] = true
		e := v.Elem()
		return int64(e.Type().Size()) + s.inner(e)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		n := s.inner(e)
		if e.Kind() != reflect.Pointer {
			n += int64(e.Type().Size()) // boxed
		}
		return n
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return 0
		}
		// A slice's array is counted once, whoever else shares it.
		p := v.Pointer()
		if s.seen[p] {
			return 0
		}
		s.seen[p] = true
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if flat(v.Type().Elem()) {
			return n
		}
		for i := 0; i < v.Len(); i++ {
			n += s.inner(v.Index(i))
		}
		return n
	case reflect.Array:
		if flat(v.Type().Elem()) {
			return 0
		}
		var n int64
		for i := 0; i < v.Len(); i++ {
			n += s.inner(v.Index(i))
		}
		return n
	case reflect.Struct:
		var n int64
		for i := 0; i < v.NumField(); i++ {
			n += s.inner(v.Field(i))
		}
		return n
	case reflect.Map:
		if v.IsNil() || s.seen[v.Pointer()] {
			return 0
		}
		s.seen[v.Pointer()] = true
		t := v.Type()
		n := int64(v.Len()) * int64(t.Key().Size()+t.Elem().Size())
		if flat(t.Key()) && flat(t.Elem()) {
			return n
		}
		for it := v.MapRange(); it.Next(); {
			n += s.inner(it.Key()) + s.inner(it.Value())
		}
		return n
	}
	return 0
}

// flat reports whether values of t refer to no other memory Size follows.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return false
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
	}
	return true
}
