/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace doubly linked lists with the kernel's <linux/list.h> names and
 * semantics: a circular list threaded through a struct list_head embedded in
 * each entry; hash lists (struct hlist_head/hlist_node) and list_sort() as
 * well. Included by os_user.h only; the kernel build uses the real
 * <linux/list.h> and <linux/list_sort.h>.
 *
 * Like the kernel built with CONFIG_DEBUG_LIST, every insertion and removal
 * checks the neighbours' links first and aborts on corruption, and list_del()
 * poisons the removed entry so a later use faults at once instead of
 * silently corrupting another list.
 */
#ifndef VGMEM_OS_LIST_H
#define VGMEM_OS_LIST_H

#ifndef VGMEM_OS_USER_H
#error "include os.h, not list.h"
#endif

struct list_head {
	struct list_head *next, *prev;
};

/* Non-canonical addresses: dereferencing them faults on x86-64. */
#define LIST_POISON1	((struct list_head *)0xdead000000000100ull)
#define LIST_POISON2	((struct list_head *)0xdead000000000122ull)

#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define LIST_HEAD(name)		struct list_head name = LIST_HEAD_INIT(name)

void os_list_corrupt(const char *what, const struct list_head *entry,
		     const struct list_head *a, const struct list_head *b)
	__attribute__((noreturn, cold));

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	list->prev = list;
}

static inline void __list_add(struct list_head *new, struct list_head *prev,
			      struct list_head *next)
{
	if (unlikely(next->prev != prev))
		os_list_corrupt("list_add: next->prev != prev", new, next, prev);
	if (unlikely(prev->next != next))
		os_list_corrupt("list_add: prev->next != next", new, prev, next);
	if (unlikely(new == prev || new == next))
		os_list_corrupt("list_add: double add", new, prev, next);
	next->prev = new;
	new->next = next;
	new->prev = prev;
	WRITE_ONCE(prev->next, new);
}

/* Insert @new right after @head (stack order). */
static inline void list_add(struct list_head *new, struct list_head *head)
{
	__list_add(new, head, head->next);
}

/* Insert @new right before @head, i.e. at the tail (queue order). */
static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	__list_add(new, head->prev, head);
}

static inline void __list_del_entry(struct list_head *entry)
{
	struct list_head *prev = entry->prev;
	struct list_head *next = entry->next;

	if (unlikely(next == LIST_POISON1 || prev == LIST_POISON2))
		os_list_corrupt("list_del: entry already deleted", entry,
				prev, next);
	if (unlikely(prev->next != entry))
		os_list_corrupt("list_del: prev->next != entry", entry, prev,
				next);
	if (unlikely(next->prev != entry))
		os_list_corrupt("list_del: next->prev != entry", entry, prev,
				next);
	next->prev = prev;
	WRITE_ONCE(prev->next, next);
}

static inline void list_del(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->next = LIST_POISON1;
	entry->prev = LIST_POISON2;
}

static inline void list_del_init(struct list_head *entry)
{
	__list_del_entry(entry);
	INIT_LIST_HEAD(entry);
}

static inline void list_move(struct list_head *list, struct list_head *head)
{
	__list_del_entry(list);
	list_add(list, head);
}

static inline void list_move_tail(struct list_head *list,
				  struct list_head *head)
{
	__list_del_entry(list);
	list_add_tail(list, head);
}

static inline int list_empty(const struct list_head *head)
{
	return READ_ONCE(head->next) == head;
}

static inline int list_is_singular(const struct list_head *head)
{
	return !list_empty(head) && head->next == head->prev;
}

static inline int list_is_first(const struct list_head *list,
				const struct list_head *head)
{
	return list->prev == head;
}

static inline int list_is_last(const struct list_head *list,
			       const struct list_head *head)
{
	return list->next == head;
}

static inline void __list_splice(const struct list_head *list,
				 struct list_head *prev,
				 struct list_head *next)
{
	struct list_head *first = list->next;
	struct list_head *last = list->prev;

	first->prev = prev;
	prev->next = first;
	last->next = next;
	next->prev = last;
}

/* Join @list at the front of @head; @list itself is left stale. */
static inline void list_splice(const struct list_head *list,
			       struct list_head *head)
{
	if (!list_empty(list))
		__list_splice(list, head, head->next);
}

static inline void list_splice_tail(const struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list))
		__list_splice(list, head->prev, head);
}

/* Join @list at the front of @head and reinitialise @list to empty. */
static inline void list_splice_init(struct list_head *list,
				    struct list_head *head)
{
	if (!list_empty(list)) {
		__list_splice(list, head, head->next);
		INIT_LIST_HEAD(list);
	}
}

/* Join @list at the tail of @head and reinitialise @list to empty. */
static inline void list_splice_tail_init(struct list_head *list,
					 struct list_head *head)
{
	if (!list_empty(list)) {
		__list_splice(list, head->prev, head);
		INIT_LIST_HEAD(list);
	}
}

#define list_entry(ptr, type, member)	container_of(ptr, type, member)

#define list_first_entry(ptr, type, member) \
	list_entry((ptr)->next, type, member)

#define list_last_entry(ptr, type, member) \
	list_entry((ptr)->prev, type, member)

#define list_first_entry_or_null(ptr, type, member) ({			\
	struct list_head *__os_head = (ptr);				\
	struct list_head *__os_pos = READ_ONCE(__os_head->next);	\
	__os_pos != __os_head ? list_entry(__os_pos, type, member) : NULL; \
})

#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, typeof(*(pos)), member)

#define list_prev_entry(pos, member) \
	list_entry((pos)->member.prev, typeof(*(pos)), member)

#define list_entry_is_head(pos, head, member)	(&(pos)->member == (head))

#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_safe(pos, n, head)				\
	for (pos = (head)->next, n = pos->next; pos != (head);		\
	     pos = n, n = pos->next)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, typeof(*pos), member);	\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_next_entry(pos, member))

#define list_for_each_entry_reverse(pos, head, member)			\
	for (pos = list_last_entry(head, typeof(*pos), member);		\
	     !list_entry_is_head(pos, head, member);			\
	     pos = list_prev_entry(pos, member))

/* Safe against removal of @pos: @n already points at the next entry. */
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, typeof(*pos), member),	\
	     n = list_next_entry(pos, member);				\
	     !list_entry_is_head(pos, head, member);			\
	     pos = n, n = list_next_entry(n, member))

/* ---- hash lists -------------------------------------------------------- */
/*
 * A list with a one-pointer head, for hash buckets and chains where the
 * head's size matters and the tail is never needed: each node points at
 * the pointer that points at it (pprev), so removal is O(1) without the
 * head. NULL pprev: on no list (hlist_unhashed()).
 */
struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

#define HLIST_POISON1	((struct hlist_node *)LIST_POISON1)
#define HLIST_POISON2	((struct hlist_node **)LIST_POISON2)

#define HLIST_HEAD_INIT		{ .first = NULL }
#define HLIST_HEAD(name)	struct hlist_head name = HLIST_HEAD_INIT
#define INIT_HLIST_HEAD(ptr)	((ptr)->first = NULL)

static inline void INIT_HLIST_NODE(struct hlist_node *h)
{
	h->next = NULL;
	h->pprev = NULL;
}

static inline int hlist_unhashed(const struct hlist_node *h)
{
	return !h->pprev;
}

static inline int hlist_empty(const struct hlist_head *h)
{
	return !READ_ONCE(h->first);
}

static inline void __hlist_del(struct hlist_node *n)
{
	struct hlist_node *next = n->next;
	struct hlist_node **pprev = n->pprev;

	if (unlikely(pprev == HLIST_POISON2 || !pprev))
		os_list_corrupt("hlist_del: entry not on a list",
				(const struct list_head *)n,
				(const struct list_head *)pprev,
				(const struct list_head *)next);
	if (unlikely(*pprev != n))
		os_list_corrupt("hlist_del: *pprev != entry",
				(const struct list_head *)n,
				(const struct list_head *)*pprev,
				(const struct list_head *)next);
	if (unlikely(next && next->pprev != &n->next))
		os_list_corrupt("hlist_del: next->pprev != &entry->next",
				(const struct list_head *)n,
				(const struct list_head *)next,
				(const struct list_head *)next->pprev);
	WRITE_ONCE(*pprev, next);
	if (next)
		WRITE_ONCE(next->pprev, pprev);
}

/* Remove @n and poison it, as list_del() does. */
static inline void hlist_del(struct hlist_node *n)
{
	__hlist_del(n);
	n->next = HLIST_POISON1;
	n->pprev = HLIST_POISON2;
}

/* Remove @n if it is on a list, and leave it unhashed. */
static inline void hlist_del_init(struct hlist_node *n)
{
	if (!hlist_unhashed(n)) {
		__hlist_del(n);
		INIT_HLIST_NODE(n);
	}
}

static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	if (unlikely(n == first))
		os_list_corrupt("hlist_add_head: double add",
				(const struct list_head *)n, NULL, NULL);
	WRITE_ONCE(n->next, first);
	if (first)
		WRITE_ONCE(first->pprev, &n->next);
	WRITE_ONCE(h->first, n);
	WRITE_ONCE(n->pprev, &h->first);
}

#define hlist_entry(ptr, type, member)	container_of(ptr, type, member)

#define hlist_entry_safe(ptr, type, member) ({				\
	typeof(ptr) __os_hptr = (ptr);					\
	__os_hptr ? hlist_entry(__os_hptr, type, member) : NULL; })

#define hlist_for_each(pos, head) \
	for (pos = (head)->first; pos; pos = pos->next)

#define hlist_for_each_safe(pos, n, head)				\
	for (pos = (head)->first; pos && ({ n = pos->next; 1; });	\
	     pos = n)

#define hlist_for_each_entry(pos, head, member)				\
	for (pos = hlist_entry_safe((head)->first, typeof(*(pos)), member); \
	     pos;							\
	     pos = hlist_entry_safe((pos)->member.next, typeof(*(pos)), member))

/* Safe against removal of @pos: @n already points at the next node. */
#define hlist_for_each_entry_safe(pos, n, head, member)			\
	for (pos = hlist_entry_safe((head)->first, typeof(*pos), member); \
	     pos && ({ n = pos->member.next; 1; });			\
	     pos = hlist_entry_safe(n, typeof(*pos), member))

/* ---- sorting (<linux/list_sort.h>) ------------------------------------- */
/*
 * @cmp returns > 0 if @a goes after @b, <= 0 to keep the two in their
 * order; @a is always the one that came first, and the sort is stable, so
 * "after" is a plain "greater than". O(n log n) comparisons, no memory
 * (os_user_list_sort.c).
 */
typedef int __attribute__((nonnull(2, 3))) (*list_cmp_func_t)(void *,
		const struct list_head *, const struct list_head *);

void list_sort(void *priv, struct list_head *head, list_cmp_func_t cmp);

#endif /* VGMEM_OS_LIST_H */
