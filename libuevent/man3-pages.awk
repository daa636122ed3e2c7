# man3-pages.awk - libuevent.3's function groups as man pages of their own, so that
# `man uevent_session__open` shows the page of its group: each .SS of libuevent.3 under
# a `.\" page: NAME` comment becomes NAME.3 (its text, then libuevent.3's RETURN VALUE
# and ENVIRONMENT). Writes the pages into dir, and prints "FUNCTION PAGE" for each
# function (exported: named in libuevent.map) a group names first.
#   awk -v dir=OUT -v map=libuevent.map -f man3-pages.awk libuevent.3
BEGIN {
	while ((getline line < map) > 0)
		if (line ~ /^[ \t]*uevent_[a-z0-9_]*;/) {
			sub(/^[ \t]*/, "", line); sub(/;.*/, "", line)
			exported[line] = 1
		}
}
/^\.TH / { th = $0; next }
/^\.SH / {
	sh = $0; sub(/^\.SH /, "", sh); ss = ""
	if (sh != "DESCRIPTION") groupless = 0
	next
}
/^\.SS / { ss = $0; sub(/^\.SS /, "", ss); next }
/^\.\\" page: / && ss != "" && sh == "DESCRIPTION" {
	page = $3; pages[++npages] = page; title[page] = ss
	next
}
sh == "DESCRIPTION" && ss != "" && page != "" {
	body[page] = body[page] $0 "\n"
	if ($1 ~ /^\.B/ && $2 ~ /^uevent_[a-z0-9_]*$/ && exported[$2] && !(($2) in owner)) {
		owner[$2] = page
		names[page] = names[page] (names[page] == "" ? "" : ", ") $2
	}
	next
}
sh == "RETURN VALUE" { ret = ret $0 "\n"; next }
sh == "ENVIRONMENT" { env = env $0 "\n"; next }
END {
	for (i = 1; i <= npages; i++) {
		p = pages[i]; f = dir "/" p ".3"
		t = th; sub(/^\.TH [A-Z_]+/, ".TH " toupper(p), t)
		d = tolower(substr(title[p], 1, 1)) substr(title[p], 2)
		printf ".\\\" %s.3 - made from libuevent.3 by man3-pages.awk: edit that.\n", p > f
		print t > f
		print ".SH NAME" > f
		print names[p] " \\- libuevent: " d > f
		print ".SH SYNOPSIS\n.nf\n.B #include <uevent.h>\n.fi\n.PP\nCompile and link with" > f
		print ".BR \"pkg\\-config \\-\\-cflags \\-\\-libs libuevent\" ." > f
		print ".SH DESCRIPTION" > f
		printf "%s", body[p] > f
		print ".PP\nEach function's comment in\n.I uevent.h\nsays what it takes and returns." > f
		print ".SH RETURN VALUE" > f
		printf "%s", ret > f
		print ".SH ENVIRONMENT" > f
		printf "%s", env > f
		print ".SH SEE ALSO\n.BR libuevent (3)," > f
		for (j = 1; j <= npages; j++)
			if (pages[j] != p)
				print ".BR " pages[j] " (3)," > f
		print ".BR uevent (1)" > f
		close(f)
	}
	for (fn in owner)
		print fn, owner[fn]
}
