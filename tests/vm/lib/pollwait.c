// SPDX-License-Identifier: GPL-2.0
/*
 * pollwait FILE MS: waits up to MS milliseconds for a sysfs_notify() on
 * sysfs attribute FILE, as a user-space watcher does (read it, then poll for
 * POLLPRI). Prints "event" or "timeout"; exits 0 on an event, 1 on a
 * timeout, 2 on an error. Built statically into the test guest
 * (scripts/mkinitramfs.sh).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct pollfd p;
	char buf[64];
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: pollwait FILE MS\n");
		return 2;
	}
	p.fd = open(argv[1], O_RDONLY);
	if (p.fd < 0 || read(p.fd, buf, sizeof(buf)) < 0) {
		perror(argv[1]);
		return 2;
	}
	/* Tell the waiting test that the watch is armed. */
	printf("armed\n");
	fflush(stdout);
	p.events = POLLPRI | POLLERR;
	n = poll(&p, 1, atoi(argv[2]));
	if (n < 0) {
		perror("poll");
		return 2;
	}
	printf(n ? "event\n" : "timeout\n");
	return n ? 0 : 1;
}
