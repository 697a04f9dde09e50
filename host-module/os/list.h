/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace doubly linked lists with the kernel's <linux/list.h> names and
 * semantics: a circular list threaded through a struct list_head embedded in
 * each entry. Included by os_user.h only; the kernel build uses the real one.
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

#endif /* VGMEM_OS_LIST_H */
