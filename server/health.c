/*
 * server/health: `preflight health [--url URL]`, an HTTP probe of a
 * running daemon's /healthz, so a container's HEALTHCHECK needs nothing
 * but the binary (no curl in the image).  Plain http only: the probe runs
 * beside the daemon, on its loopback address.
 */
#include "health.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PORT "8080"

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: preflight health [--url URL] [--timeout SECONDS]\n"
	    "\n"
	    "GET URL and exit 0 when the answer is 2xx, 1 otherwise (a "
	    "container\n"
	    "HEALTHCHECK).  Plain http only.\n"
	    "  --url URL          default http://127.0.0.1:8080/healthz, or "
	    "the port of\n"
	    "                     PREFLIGHT_LISTEN when it is set\n"
	    "  --timeout SECONDS  connect and answer within this (default 5)\n"
	    "  -h, --help         this help\n");
}

struct url {
	char host[256];
	char port[16];
	char path[1024];
};

/* http://HOST[:PORT][/PATH], HOST possibly [v6]; -1 when malformed. */
static int
parse_url(struct url *u, const char *s)
{
	const char *h, *end, *colon, *slash;
	size_t hn;

	if (strncmp(s, "http://", 7) != 0)
		return -1;
	h = s + 7;
	slash = strchr(h, '/');
	end = slash != NULL ? slash : h + strlen(h);
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (rb == NULL)
			return -1;
		hn = (size_t)(rb - h - 1);
		memcpy(u->host, h + 1, hn < sizeof(u->host) ? hn : 0);
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hn = (size_t)((colon != NULL ? colon : end) - h);
		memcpy(u->host, h, hn < sizeof(u->host) ? hn : 0);
	}
	if (hn == 0 || hn >= sizeof(u->host))
		return -1;
	u->host[hn] = '\0';
	if (colon != NULL) {
		size_t pn = (size_t)(end - colon - 1);

		if (pn == 0 || pn >= sizeof(u->port))
			return -1;
		memcpy(u->port, colon + 1, pn);
		u->port[pn] = '\0';
	} else {
		snprintf(u->port, sizeof(u->port), "80");
	}
	if (snprintf(u->path, sizeof(u->path), "%s", slash != NULL ? slash :
	    "/") >= (int)sizeof(u->path))
		return -1;
	return 0;
}

/* The default URL: loopback, PREFLIGHT_LISTEN's port, /healthz. */
static void
default_url(char *out, size_t cap)
{
	const char *listen = getenv("PREFLIGHT_LISTEN");
	const char *port = listen != NULL ? strrchr(listen, ':') : NULL;

	if (port != NULL && port[1] != '\0' &&
	    strspn(port + 1, "0123456789") == strlen(port + 1))
		snprintf(out, cap, "http://127.0.0.1:%s/healthz", port + 1);
	else
		snprintf(out, cap, "http://127.0.0.1:" DEFAULT_PORT
		    "/healthz");
}

static long
ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* Wait for fd to be ready for events before the deadline. */
static int
wait_fd(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p = { fd, events, 0 };
	long left = ms_left(deadline);

	if (left <= 0)
		return -1;
	return poll(&p, 1, (int)left) == 1 ? 0 : -1;
}

/* Connect to u within the deadline; the socket, or -1. */
static int
dial(const struct url *u, const struct timespec *deadline)
{
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(u->host, u->port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		int err = 0;
		socklen_t len = sizeof(err);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if ((connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && wait_fd(fd, POLLOUT,
		    deadline) == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR,
		    &err, &len) == 0 && err == 0)))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* GET u; the HTTP status, or -1 (with why) when there is none. */
static int
probe(const struct url *u, int timeout_s, const char **why)
{
	struct timespec deadline;
	char req[1400], resp[64];
	size_t got = 0, sent = 0, n;
	int fd, status = -1;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_s;
	fd = dial(u, &deadline);
	if (fd < 0) {
		*why = "cannot connect";
		return -1;
	}
	n = (size_t)snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: "
	    "%s\r\nUser-Agent: preflight-health\r\nConnection: close\r\n\r\n",
	    u->path, u->host);
	*why = "no HTTP answer in time";
	while (sent < n) {
		ssize_t w;

		if (wait_fd(fd, POLLOUT, &deadline) != 0)
			goto out;
		w = send(fd, req + sent, n - sent, MSG_NOSIGNAL);
		if (w <= 0)
			goto out;
		sent += (size_t)w;
	}
	while (got < sizeof(resp) - 1) {
		ssize_t r;

		if (wait_fd(fd, POLLIN, &deadline) != 0)
			goto out;
		r = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(resp, '\n', got) != NULL)
			break;
	}
	resp[got] = '\0';
	if (strncmp(resp, "HTTP/1.", 7) == 0 && got >= 12 && resp[8] == ' ' &&
	    sscanf(resp + 9, "%3d", &status) == 1)
		*why = NULL;
	else
		*why = "not an HTTP answer";
out:
	close(fd);
	return *why == NULL ? status : -1;
}

int
health_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char def[128];
	const char *url = NULL, *why = NULL;
	struct url u;
	long timeout = 5;
	char *end;
	int c, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 't':
			errno = 0;
			timeout = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || timeout < 1 ||
			    timeout > 300) {
				fprintf(stderr, "preflight health: error: "
				    "--timeout must be 1 to 300 seconds, got "
				    "'%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (url == NULL) {
		default_url(def, sizeof(def));
		url = def;
	}
	memset(&u, 0, sizeof(u));
	if (parse_url(&u, url) != 0) {
		fprintf(stderr, "preflight health: error: --url must be "
		    "http://HOST[:PORT][/PATH], got '%s'\n", url);
		return 2;
	}
	status = probe(&u, (int)timeout, &why);
	if (status >= 200 && status < 300) {
		printf("%s: %d\n", url, status);
		return 0;
	}
	if (status > 0)
		fprintf(stderr, "preflight health: %s: HTTP %d\n", url, status);
	else
		fprintf(stderr, "preflight health: %s: %s\n", url, why);
	return 1;
}
