package queue

// spot is where a waiting ticket stands in its queue: tickets are called
// by (rank, sort key, id), the order of tx.Ahead.
type spot struct {
	rank int
	key  int64
	id   int64
}

func (a spot) less(b spot) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.id < b.id
}

// tree is an order-statistic treap of spots: insert, delete and "how many
// before" in O(log n) expected, whatever the order of the insertions.
type tree struct {
	root *node
	seed uint64
}

type node struct {
	s           spot
	prio        uint64
	size        int
	left, right *node
}

func size(n *node) int {
	if n == nil {
		return 0
	}
	return n.size
}

func (n *node) fix() { n.size = 1 + size(n.left) + size(n.right) }

// rand is a xorshift: the treap needs priorities, not good randomness.
func (t *tree) rand() uint64 {
	if t.seed == 0 {
		t.seed = 0x9e3779b97f4a7c15
	}
	t.seed ^= t.seed << 13
	t.seed ^= t.seed >> 7
	t.seed ^= t.seed << 17
	return t.seed
}

// split cuts n into the spots before s and those from s on.
func split(n *node, s spot) (*node, *node) {
	if n == nil {
		return nil, nil
	}
	if n.s.less(s) {
		l, r := split(n.right, s)
		n.right = l
		n.fix()
		return n, r
	}
	l, r := split(n.left, s)
	n.left = r
	n.fix()
	return l, n
}

// merge joins a and b, every spot of a before every spot of b.
func merge(a, b *node) *node {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.right = merge(a.right, b)
		a.fix()
		return a
	}
	b.left = merge(a, b.left)
	b.fix()
	return b
}

// insert adds s; the caller never inserts a spot twice.
func (t *tree) insert(s spot) {
	l, r := split(t.root, s)
	t.root = merge(merge(l, &node{s: s, prio: t.rand(), size: 1}), r)
}

// delete removes s if it is there.
func (t *tree) delete(s spot) {
	var del func(n *node) *node
	del = func(n *node) *node {
		switch {
		case n == nil:
			return nil
		case s.less(n.s):
			n.left = del(n.left)
		case n.s.less(s):
			n.right = del(n.right)
		default:
			return merge(n.left, n.right)
		}
		n.fix()
		return n
	}
	t.root = del(t.root)
}

// before counts the spots ordered before s.
func (t *tree) before(s spot) int {
	c := 0
	for n := t.root; n != nil; {
		if n.s.less(s) {
			c += size(n.left) + 1
			n = n.right
		} else {
			n = n.left
		}
	}
	return c
}

// len is the number of spots.
func (t *tree) len() int { return size(t.root) }
