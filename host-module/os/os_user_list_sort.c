// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * list_sort() for userspace (os/list.h), with the kernel's contract: a
 * stable merge sort of a struct list_head list, O(n log n) comparisons,
 * no allocation, no recursion, @cmp always given the element that came
 * first as @a.
 *
 * The method is the binary counter of sorted runs: bin[k] holds a sorted
 * run of 2^k elements or nothing. Each element enters as a run of one and
 * merges upward like a carry, so every merge takes two runs of equal
 * length, and bin[k] always holds elements that came before those of any
 * lower bin; a merge puts the older run first and keeps its element on
 * ties, hence stability. The runs are NULL-terminated chains through
 * ->next; the ->prev links are rebuilt in one pass at the end.
 */
#include "os.h"

/* 2^64 elements are more than memory holds. */
#define OS_SORT_BINS	64

/* Merge @a (the earlier elements) and @b into one sorted chain. */
static struct list_head *os_merge(void *priv, list_cmp_func_t cmp,
				  struct list_head *a, struct list_head *b)
{
	struct list_head *head = NULL, **tail = &head;

	while (a && b) {
		if (cmp(priv, a, b) <= 0) {
			*tail = a;
			a = a->next;
		} else {
			*tail = b;
			b = b->next;
		}
		tail = &(*tail)->next;
	}
	*tail = a ? a : b;
	return head;
}

void list_sort(void *priv, struct list_head *head, list_cmp_func_t cmp)
{
	struct list_head *bin[OS_SORT_BINS] = { NULL };
	struct list_head *pos, *next, *run = NULL, *prev;
	unsigned int k, used = 0;

	if (list_empty(head) || list_is_singular(head))
		return;
	/* Open the circle: the last element's ->next ends the chain. */
	head->prev->next = NULL;
	for (pos = head->next; pos; pos = next) {
		next = pos->next;
		pos->next = NULL;
		run = pos;
		for (k = 0; bin[k]; k++) {
			run = os_merge(priv, cmp, bin[k], run);
			bin[k] = NULL;
		}
		bin[k] = run;
		if (k >= used)
			used = k + 1;
	}
	/* Higher bins hold earlier elements: merge them in from below. */
	run = NULL;
	for (k = 0; k < used; k++)
		if (bin[k])
			run = run ? os_merge(priv, cmp, bin[k], run) : bin[k];
	/* Close the circle again, ->prev links and all. */
	prev = head;
	for (pos = run; pos; pos = pos->next) {
		pos->prev = prev;
		prev->next = pos;
		prev = pos;
	}
	prev->next = head;
	head->prev = prev;
}
