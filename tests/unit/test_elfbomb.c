// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_elfbomb: files a user maps, made to cost root's cprof-dump -i its
 * memory (-d symbolizes through the same code).  A 2 MiB shared object
 * whose compressed .symtab decompresses to 2 GiB, one whose xz
 * .gnu_debugdata does, and one of 8 Mi symbols (192 MiB of .symtab), each
 * sampled beside a small library (the last also as the debug file of a
 * stripped one), and a sparse file claiming 10 M section headers:
 * cprof-dump's peak RSS stays within 256 MiB, the other library's frame
 * is still named, and one warning names the file and the bound (the
 * last file is refused by -d's other readers too).  A file
 * of as many symbols as the bound allows is named within the same RSS.  The fixtures are written with libelf; the bombs' streams
 * are one block of zeros repeated, as zlib and liblzma make it.
 */
#include <elf.h>
#include <gelf.h>
#include <lzma.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "unwind/cfi.h"
#include "lib/elfbound.h"
#include "python/pyrt.h"
#include "streambuild.h"
#include "test.h"
#include "testutil.h"

#define PID		4343
#define SCHEDULE	0xffffffff81100000ull
#define TEXT		0x1000ull	/* .text's offset and address */
#define GOOD_AT		0x7f0000000000ull
#define BAD_AT		0x7f1000000000ull
#define CROWD_AT	0x7f2000000000ull
#define RSS_MAX_KB	(256 * 1024)
#define BOMB_SIZE	(2048ull << 20)	/* what the bomb's .symtab inflates to */
#define CHUNK		(1u << 20)

static const char kallsyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81100000 T schedule\n"
	"ffffffff81200000 T _etext\n";

/*
 * A shared object of one page of .text and the symbol table given, or
 * instead of it a .gnu_debugdata of those bytes (MiniDebugInfo: an xz
 * stream of an ELF file of symbols).
 */
struct fixture {
	const void *symtab;
	size_t symtab_len;
	bool compressed;	/* symtab is an Elf64_Chdr and zlib data */
	bool debugdata;
	const char *names;
	size_t names_len;
};

static Elf_Scn *add_section(Elf *e, const char *what, uint32_t name,
			    uint32_t type, uint64_t flags, const void *buf,
			    size_t len, size_t align)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;

	if (!d || !sh) {
		fprintf(stderr, "libelf: %s: %s\n", what, elf_errmsg(-1));
		return NULL;
	}
	d->d_buf = (void *)buf;
	d->d_size = len;
	d->d_align = align;
	d->d_type = ELF_T_BYTE;
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addralign = align;
	return scn;
}

static int write_elf(const char *path, const struct fixture *fx)
{
	static const char shnames[] =
		"\0.text\0.symtab\0.strtab\0.shstrtab\0.gnu_debugdata";
	static unsigned char text[4096];
	Elf_Scn *scn[4];
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	int fd, err = -1;
	Elf *e;

	memset(text, 0xcc, sizeof(text));
	elf_version(EV_CURRENT);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	e = fd >= 0 ? elf_begin(fd, ELF_C_WRITE, NULL) : NULL;
	eh = e ? elf64_newehdr(e) : NULL;
	ph = eh ? elf64_newphdr(e, 1) : NULL;
	if (!ph)
		goto out;
	/* a compressed table's size is no multiple of its entries' */
	elf_flagelf(e, ELF_C_SET, ELF_F_PERMISSIVE);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	scn[0] = add_section(e, ".text", 1, SHT_PROGBITS,
			     SHF_ALLOC | SHF_EXECINSTR, text, sizeof(text),
			     TEXT);
	scn[1] = fx->debugdata ?
		 add_section(e, ".gnu_debugdata", 33, SHT_PROGBITS, 0,
			     fx->symtab, fx->symtab_len, 1) :
		 add_section(e, ".symtab", 7, SHT_SYMTAB,
			     fx->compressed ? SHF_COMPRESSED : 0, fx->symtab,
			     fx->symtab_len, 8);
	scn[2] = add_section(e, ".strtab", 15, SHT_STRTAB, 0, fx->names,
			     fx->names_len, 1);
	scn[3] = add_section(e, ".shstrtab", 23, SHT_STRTAB, 0, shnames,
			     sizeof(shnames), 1);
	if (!scn[0] || !scn[1] || !scn[2] || !scn[3])
		goto out;
	elf64_getshdr(scn[0])->sh_addr = TEXT;
	sh = elf64_getshdr(scn[1]);
	if (!fx->debugdata) {
		sh->sh_link = elf_ndxscn(scn[2]);
		sh->sh_info = 1;
		sh->sh_entsize = sizeof(Elf64_Sym);
	}
	eh->e_shstrndx = elf_ndxscn(scn[3]);
	if (elf_update(e, ELF_C_NULL) < 0 ||
	    elf64_getshdr(scn[0])->sh_offset != TEXT) {
		fprintf(stderr, "libelf: layout: %s\n", elf_errmsg(-1));
		goto out;
	}
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = ph->p_vaddr = ph->p_paddr = TEXT;
	ph->p_filesz = ph->p_memsz = sizeof(text);
	ph->p_align = TEXT;
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0)
		fprintf(stderr, "libelf: write: %s\n", elf_errmsg(-1));
	else
		err = 0;
out:
	if (e)
		elf_end(e);
	if (fd >= 0 && close(fd))
		err = -1;
	return err;
}

/* the null symbol, then n functions named 1 in .text, the first at 0x100 */
static Elf64_Sym *symbols(size_t n)
{
	Elf64_Sym *s = calloc(n + 1, sizeof(*s));
	size_t i;

	if (!s)
		abort();
	for (i = 1; i <= n; i++) {
		s[i].st_name = 1;
		s[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s[i].st_shndx = 1;
		s[i].st_value = TEXT + 0x100 + (i - 1) % 0xe00;
		s[i].st_size = 0x20;
	}
	return s;
}

/*
 * Written by a child process: a process's peak RSS counts what its parent
 * had when it forked it, and cprof-dump is forked from here.
 */
static int write_symbols(const char *path, size_t n, const char *name)
{
	char names[64];
	struct fixture fx = { .names = names };
	Elf64_Sym *s;
	pid_t pid;
	int st;

	pid = fork();
	if (pid)
		return pid < 0 || waitpid(pid, &st, 0) != pid ||
		       !WIFEXITED(st) || WEXITSTATUS(st);
	s = symbols(n);
	fx.names_len = (size_t)snprintf(names, sizeof(names), "%c%s", 0,
					name) + 1;
	fx.symtab = s;
	fx.symtab_len = (n + 1) * sizeof(*s);
	_exit(write_elf(path, &fx) ? 1 : 0);
}

/*
 * A .symtab of BOMB_SIZE zero bytes, compressed: after a full flush
 * deflate starts afresh, so each further CHUNK of zeros compresses to the
 * same bytes, and the stream is its first chunk, the next one repeated,
 * an empty final block and the Adler-32 of it all.
 */
static int write_bomb(const char *path)
{
	static const char names[] = "\0fn";
	unsigned char *zeros = calloc(1, CHUNK), *out;
	size_t first, next, len, cap = 4 * CHUNK, i;
	uLong adler = adler32(0, NULL, 0), one;
	struct fixture fx = { .names = names, .names_len = sizeof(names),
			      .compressed = true };
	Elf64_Chdr *ch;
	z_stream z = { 0 };
	int err;

	out = malloc(cap);
	if (!zeros || !out || deflateInit(&z, 9) != Z_OK)
		abort();
	ch = (Elf64_Chdr *)out;
	memset(ch, 0, sizeof(*ch));
	ch->ch_type = ELFCOMPRESS_ZLIB;
	ch->ch_size = BOMB_SIZE;
	ch->ch_addralign = 8;
	z.next_out = out + sizeof(*ch);
	z.avail_out = cap - sizeof(*ch);
	for (i = 0; i < 2; i++) {
		z.next_in = zeros;
		z.avail_in = CHUNK;
		if (deflate(&z, Z_FULL_FLUSH) != Z_OK || z.avail_in)
			abort();
		if (!i)
			first = z.total_out;
	}
	next = z.total_out - first;
	deflateEnd(&z);
	one = adler32(adler32(0, NULL, 0), zeros, CHUNK);
	len = sizeof(*ch) + first;
	for (i = 1; i < BOMB_SIZE / CHUNK; i++) {
		if (len + next + 6 > cap && !(out = realloc(out, cap *= 2)))
			abort();
		memcpy(out + len, out + sizeof(*ch) + first, next);
		len += next;
	}
	for (i = 0; i < BOMB_SIZE / CHUNK; i++)
		adler = adler32_combine(adler, one, CHUNK);
	/* a final fixed-Huffman block holding only its end, then Adler-32 */
	out[len++] = 0x03;
	out[len++] = 0x00;
	for (i = 0; i < 4; i++)
		out[len++] = (unsigned char)(adler >> (24 - 8 * i));
	fx.symtab = out;
	fx.symtab_len = len;
	err = write_elf(path, &fx);
	free(out);
	free(zeros);
	return err;
}

/*
 * Does the zlib stream of path's .symtab decode, its first PREFIX bytes
 * at least (the repeated chunk joined to the first)?  The whole is the
 * old cprof-dump's 2 GiB, and takes seconds.
 */
#define PREFIX	(8 * CHUNK)
static bool bomb_decodes(const char *path)
{
	unsigned char *in, *buf = malloc(CHUNK);
	uint64_t total = 0;
	z_stream z = { 0 };
	size_t len;
	int rc = Z_OK;

	in = (unsigned char *)slurp(path, &len);
	/* the section follows .text's page; its data after the header */
	if (!in || !buf || len < 2 * TEXT || inflateInit(&z) != Z_OK) {
		free(in);
		free(buf);
		return false;
	}
	z.next_in = in + 2 * TEXT + sizeof(Elf64_Chdr);
	z.avail_in = len - 2 * TEXT - sizeof(Elf64_Chdr);
	while (rc == Z_OK && total < PREFIX) {
		z.next_out = buf;
		z.avail_out = CHUNK;
		rc = inflate(&z, Z_NO_FLUSH);
		total += CHUNK - z.avail_out;
	}
	inflateEnd(&z);
	free(in);
	free(buf);
	return rc == Z_OK && total >= PREFIX;
}

/*
 * A .gnu_debugdata of BOMB_SIZE zeros: an xz stream of one block of CHUNK
 * zeros, encoded once and repeated (each block stands alone), the index
 * of them all and the stream's footer.
 */
static int write_xz_bomb(const char *path)
{
	static const char names[] = "\0fn";
	struct fixture fx = { .names = names, .names_len = sizeof(names),
			      .debugdata = true };
	lzma_stream_flags flags = { .check = LZMA_CHECK_CRC32 };
	size_t blen = 0, pos, cap, i, n = BOMB_SIZE / CHUNK;
	unsigned char *zeros = calloc(1, CHUNK), *block, *out;
	lzma_index *idx = lzma_index_init(NULL);
	lzma_filter filters[2];
	lzma_options_lzma opt;
	lzma_block blk = { .check = LZMA_CHECK_CRC32, .filters = filters };
	int err;

	block = malloc(lzma_block_buffer_bound(CHUNK));
	if (!zeros || !block || !idx || lzma_lzma_preset(&opt, 0))
		abort();
	filters[0].id = LZMA_FILTER_LZMA2;
	filters[0].options = &opt;
	filters[1].id = LZMA_VLI_UNKNOWN;
	if (lzma_block_buffer_encode(&blk, NULL, zeros, CHUNK, block, &blen,
				     lzma_block_buffer_bound(CHUNK)) != LZMA_OK)
		abort();
	cap = 2 * LZMA_STREAM_HEADER_SIZE + n * blen + 64 * n + 64;
	out = malloc(cap);
	if (!out || lzma_stream_header_encode(&flags, out) != LZMA_OK)
		abort();
	pos = LZMA_STREAM_HEADER_SIZE;
	for (i = 0; i < n; i++) {
		memcpy(out + pos, block, blen);
		pos += blen;
		if (lzma_index_append(idx, NULL, lzma_block_unpadded_size(&blk),
				      CHUNK) != LZMA_OK)
			abort();
	}
	flags.backward_size = lzma_index_size(idx);
	if (lzma_index_buffer_encode(idx, out, &pos, cap) != LZMA_OK ||
	    lzma_stream_footer_encode(&flags, out + pos) != LZMA_OK)
		abort();
	fx.symtab = out;
	fx.symtab_len = pos + LZMA_STREAM_HEADER_SIZE;
	err = write_elf(path, &fx);
	lzma_index_end(idx, NULL);
	free(out);
	free(block);
	free(zeros);
	return err;
}

/* Does path's .gnu_debugdata decode, its first PREFIX bytes at least? */
static bool xz_decodes(const char *path)
{
	unsigned char *in, *buf = malloc(CHUNK);
	lzma_stream z = LZMA_STREAM_INIT;
	size_t len;
	lzma_ret rc = LZMA_OK;

	in = (unsigned char *)slurp(path, &len);
	if (!in || !buf || len < 2 * TEXT ||
	    lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK) {
		free(in);
		free(buf);
		return false;
	}
	z.next_in = in + 2 * TEXT;
	z.avail_in = len - 2 * TEXT;
	while (rc == LZMA_OK && z.total_out < PREFIX) {
		z.next_out = buf;
		z.avail_out = CHUNK;
		rc = lzma_code(&z, LZMA_RUN);
	}
	lzma_end(&z);
	free(in);
	free(buf);
	return rc == LZMA_OK && z.total_out >= PREFIX;
}

/*
 * An ELF header claiming n section headers (in the first one's sh_size,
 * as past 0xff00), a sparse file of 64 * n bytes and a few KiB on disk.
 */
static int write_headers(const char *path, uint64_t n)
{
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
			     ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64,
		.e_version = EV_CURRENT, .e_phoff = sizeof(eh),
		.e_shoff = TEXT, .e_ehsize = sizeof(eh),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1,
		.e_shentsize = sizeof(Elf64_Shdr),
	};
	Elf64_Phdr ph = {
		.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = TEXT,
		.p_vaddr = TEXT, .p_filesz = TEXT, .p_memsz = TEXT,
		.p_align = TEXT,
	};
	Elf64_Shdr sh0 = { .sh_size = n };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err;

	err = fd < 0 || pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	      pwrite(fd, &ph, sizeof(ph), sizeof(eh)) != sizeof(ph) ||
	      pwrite(fd, &sh0, sizeof(sh0), TEXT) != sizeof(sh0) ||
	      ftruncate(fd, TEXT + n * sizeof(sh0));
	if (fd >= 0 && close(fd))
		err = 1;
	return err ? -1 : 0;
}

/*
 * The stream: bad's leaf called from good's, and with crowd > 0 that many
 * libraries no longer on disk, each with two addresses sampled: more files
 * left unsymbolized than the warning names, each with more addresses
 * than bad.
 */
static int write_stream(const char *path, const char *good, const char *bad,
			int crowd)
{
	struct cprof_header h = sb_default_header();
	/* the leaf in bad's first symbol, called from good's */
	uint64_t ips[2] = { BAD_AT + TEXT + 0x100, GOOD_AT + TEXT + 0x111 };
	char gone[64];
	struct sb b;
	int err, i;

	h.ksym_schedule = SCHEDULE;
	sb_init(&b);
	sb_header(&b, &h);
	sb_mmap(&b, 1, PID, GOOD_AT + TEXT, GOOD_AT + 2 * TEXT, TEXT, good,
		NULL, 0);
	sb_mmap(&b, 1, PID, BAD_AT + TEXT, BAD_AT + 2 * TEXT, TEXT, bad,
		NULL, 0);
	for (i = 0; i < crowd; i++) {
		uint64_t at = CROWD_AT + (uint64_t)i * 0x100000 + TEXT;
		uint64_t ip[1];

		snprintf(gone, sizeof(gone), "/nonexistent/crowd%d.so", i);
		sb_mmap(&b, 1, PID, at, at + TEXT, TEXT, gone, NULL, 0);
		ip[0] = at + 0x10;
		sb_sample(&b, 10, PID, PID, 0, "victim",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, ip);
		ip[0] = at + 0x20;
		sb_sample(&b, 10, PID, PID, 0, "victim",
			  CPROF_SAMPLE_USER_MODE, 0, NULL, 1, ip);
	}
	sb_sample(&b, 10, PID, PID, 0, "victim", CPROF_SAMPLE_USER_MODE, 0,
		  NULL, 2, ips);
	sb_end(&b, 1000000000, CPROF_END_COMPLETE, 0);
	err = sb_write(&b, path, b.len);
	sb_free(&b);
	return err;
}

/*
 * cprof-dump -i in -f folded, its stdout and stderr in out.txt and
 * err.txt; its exit status, its peak RSS (KiB) in *rss_kb.
 */
static int dump(const char *in, long *rss_kb)
{
	char *argv[] = {
		(char *)cprof_dump(), "-i", (char *)in, "-f", "folded",
		"--kallsyms", (char *)tmp_path("kallsyms"),
		"--modules", (char *)tmp_path("modules"), NULL,
	};
	struct rusage ru;
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0) {
		int o = open(tmp_path("out.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(tmp_path("err.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid)
		return -1;
	*rss_kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Lines of s holding needle. */
static int lines_with(const char *s, const char *needle)
{
	const char *p = s, *end;
	int n = 0;

	while (p && *p) {
		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		if (memmem(p, end - p, needle, strlen(needle)))
			n++;
		p = *end ? end + 1 : end;
	}
	return n;
}

/*
 * bad sampled beside good: within RSS_MAX_KB, good's frame named; bad's
 * named too if named, else one warning naming bad and the bound.
 */
static void check_crowd(const char *what, const char *good, const char *bad,
			bool named, int crowd)
{
	const char *in = tmp_path("stream.bin");
	char *out = NULL, *err = NULL, want[128];
	long rss = 0;
	int rc;

	if (write_stream(in, good, bad, crowd)) {
		test_condf(false, "%s: write the stream", what);
		return;
	}
	rc = dump(in, &rss);
	out = slurp(tmp_path("out.txt"), NULL);
	err = slurp(tmp_path("err.txt"), NULL);
	test_condf(rc == 0, "%s: cprof-dump -i exits 0 (%d)", what, rc);
	test_condf(rss > 0 && rss <= RSS_MAX_KB,
		   "%s: peak RSS %ld MiB, at most %d", what, rss >> 10,
		   RSS_MAX_KB >> 10);
	test_condf(out && strstr(out, "victim;good_fn;"),
		   "%s: the other library's frame is named (%s)", what,
		   out ? out : "");
	if (named) {
		test_condf(out && strstr(out, "victim;good_fn;fn 1\n") &&
			   err && !*err,
			   "%s: its frame is named, silently (%s)", what,
			   err ? err : "");
	} else {
		snprintf(want, sizeof(want), "victim;good_fn;%s+0x",
			 strrchr(bad, '/') + 1);
		test_condf(out && strstr(out, want),
			   "%s: its frame is left an address in its file",
			   what);
		test_condf(err && lines_with(err, bad) == 1 &&
			   strstr(err, "past the bound of") && nr_lines(err) == 1,
			   "%s: one warning names the file and the bound (%s)",
			   what, err ? err : "");
	}
	free(out);
	free(err);
}

static void check(const char *what, const char *good, const char *bad,
		  bool named)
{
	check_crowd(what, good, bad, named, 0);
}

/*
 * What -d also reads of every mapped file, the unwind-table compiler and
 * the CPython detector, refuses path, claiming too many headers, before
 * libelf sets them up.
 */
static void headers_refused(const char *path)
{
	const char *why = NULL;
	struct rusage ru0, ru1;
	struct cfi_table t;
	struct pyrt rt;
	char err[256] = "";
	int fd = open(path, O_RDONLY), rc = 0, py = 1;

	getrusage(RUSAGE_SELF, &ru0);
	if (fd >= 0) {
		rc = cfi_compile(fd, &t, err, sizeof(err));
		py = pyrt_detect_fd(fd, &rt, &why);
		close(fd);
	}
	getrusage(RUSAGE_SELF, &ru1);
	test_condf(rc && strstr(err, "section or program headers"),
		   "... the unwind-table compiler refuses it (%s)", err);
	test_condf(py == -1 && why && strstr(why, "headers"),
		   "... so does the CPython detector (%s)", why ? why : "");
	test_condf(ru1.ru_maxrss - ru0.ru_maxrss < 32 * 1024,
		   "... neither reads them (max RSS grew %ld KiB)",
		   ru1.ru_maxrss - ru0.ru_maxrss);
	if (!rc)
		cfi_table_free(&t);
}

/* A small file that decompresses to BOMB_SIZE, written and checked. */
static void bomb_case(const char *what, const char *good, const char *path,
		      int (*write)(const char *), bool (*decodes)(const char *))
{
	struct stat st;

	test_condf(!write(path) && !stat(path, &st), "%s written", what);
	test_condf(st.st_size <= (3 << 20) && decodes(path),
		   "... %lld KiB, its stream decodes (zeros)",
		   (long long)st.st_size >> 10);
	check(what, good, path, false);
	unlink(path);
}

int main(void)
{
	const char *good = tmp_path("good.so"), *bomb = tmp_path("bomb.so");
	const char *many = tmp_path("many.so"), *most = tmp_path("most.so");
	const char *xz = tmp_path("xz.so"), *linked = tmp_path("linked.so");
	const char *headers = tmp_path("headers.so");
	FILE *f;

	f = fopen(tmp_path("kallsyms"), "w");
	test_cond("kallsyms fixture", f && fputs(kallsyms_text, f) >= 0 &&
		  !fclose(f));
	f = fopen(tmp_path("modules"), "w");
	test_cond("modules fixture", f && !fclose(f));
	test_cond("a small library", !write_symbols(good, 1, "good_fn"));

	bomb_case("the .symtab bomb", good, bomb, write_bomb, bomb_decodes);
	bomb_case("the .gnu_debugdata bomb", good, xz, write_xz_bomb,
		  xz_decodes);

	test_cond("8 Mi symbols", !write_symbols(many, 8 << 20, "fn"));
	check("8 Mi symbols", good, many, false);
	/* named first, not one of the "and more" behind 6 files of 2 */
	check_crowd("8 Mi symbols among 6 missing libraries", good, many,
		    false, 6);
	/* the same as the debug file beside a stripped library, its owner's */
	test_cond("... as a stripped library's debug file",
		  !run("objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s'",
		       many, good, linked));
	check("8 Mi symbols in its debug file", good, linked, false);
	unlink(many);

	test_cond("10 M section headers, a sparse file",
		  !write_headers(headers, 10000000));
	check("10 M section headers", good, headers, false);
	headers_refused(headers);
	unlink(headers);

	test_cond("as many symbols as the bound allows",
		  !write_symbols(most, ELFBOUND_SYMBOLS_MAX - 1, "fn"));
	check("symbols up to the bound", good, most, true);
	unlink(most);
	return test_report();
}
