"""Perl modules: their POD read as perldoc shows it, their code kept where it stands, as code."""

from raychunk.parse import parse_document
from tests.spans import chunks_holding_their_spans

MODULE = """\
package Frob;

use strict;
use warnings;

our $VERSION = '1.02';

=head1 NAME

Frob - frobnicate strings in place

=head1 SYNOPSIS

    use Frob;
    my $out = Frob::frob("text", level => 3);

=head1 FUNCTIONS

=head2 frob($string, %options)

Returns C<$string> frobnicated. Options:

=over 4

=item level

How hard to frob, 1 to 5.

=back

=cut

sub frob {
    my ($string, %options) = @_;
    return scalar reverse $string;
}

=head2 unfrob($string)

Undoes L</frob>.

=cut

sub unfrob { return scalar reverse $_[0] }

1;

__END__

=head1 AUTHOR

A. Person

=cut

binary data that is no text 0x00 0x01
"""


def test_a_module_reads_as_its_pod_with_its_code_in_place():
    doc = parse_document(MODULE.encode(), "lib/Frob.pm")
    assert (doc.document.format, doc.document.status) == ("perl", "ok")
    assert doc.document.title == "Frob - frobnicate strings in place"
    blocks = [(b.kind, b.heading_path, b.text.split("\n")[0]) for b in doc.blocks]
    assert blocks[0] == ("code", (), "package Frob;")
    assert ("heading", ("FUNCTIONS",), "frob($string, %options)") in blocks
    assert (
        "paragraph",
        ("FUNCTIONS", "frob($string, %options)"),
        "Returns $string frobnicated. Options:",
    ) in blocks
    frob = next(b for b in doc.blocks if b.kind == "code" and b.text.startswith("sub frob"))
    assert frob.language == "perl" and frob.heading_path == ("FUNCTIONS", "frob($string, %options)")
    assert frob.text.endswith("return scalar reverse $string;\n}")
    unfrob = next(b for b in doc.blocks if b.kind == "code" and b.text.startswith("sub unfrob"))
    assert unfrob.heading_path == ("FUNCTIONS", "unfrob($string)") and unfrob.text.endswith("1;")
    # after __END__, POD is read and the data is not
    assert ("paragraph", ("AUTHOR",), "A. Person") in blocks
    text = "\n".join(b.text for b in doc.blocks)
    assert "binary data" not in text and "RAYCHUNKPERLCODE" not in text and "=cut" not in text
    assert doc.text[doc.blocks[0].char_start : doc.blocks[0].char_end] == doc.blocks[0].text
    assert all(n > 0 for n in chunks_holding_their_spans(doc, 60))


def test_a_script_without_pod_is_code():
    script = '#!/usr/bin/perl\nuse strict;\n\nsub greet {\n    print "hello\\n";\n}\n\ngreet();\n'
    doc = parse_document(script.encode(), "bin/greet.pl")
    assert doc.document.format == "code" and doc.document.status == "ok"
    assert [(b.kind, b.language) for b in doc.blocks] == [("code", "perl")] * 3
    assert doc.blocks[1].text == 'sub greet {\n    print "hello\\n";\n}'


def test_a_list_of_methods_open_across_the_code():
    """CPAN::Mirrors, ExtUtils::MakeMaker and 19 more of Perl's own modules: an ``=over`` list whose
    items stand each above its method's code, or a ``=begin`` region closed by ``=cut``; pandoc
    refused the POD as one. Each item reads as its own paragraph, its code after it."""
    module = (
        "package M;\n\n=head1 METHODS\n\n=over\n\n=item new( FILE )\n\nCreate one from FILE.\n\n=cut\n\n"
        "sub new { bless {}, shift }\n\n=item count()\n\nHow many there are.\n\n=cut\n\n"
        "sub count { 0 }\n\n=back\n\n=begin _private\n\n=over\n\n=item helper()\n\nNot for you.\n\n=cut\n\n"
        "sub helper { 1 }\n\n1;\n"
    )
    doc = parse_document(module.encode(), "lib/M.pm")
    assert doc.document.status == "ok" and doc.document.reason == ""
    got = [(b.kind, b.text) for b in doc.blocks if b.kind != "heading"]
    assert got == [
        ("code", "package M;"),
        ("paragraph", "new( FILE ): Create one from FILE."),
        ("code", "sub new { bless {}, shift }"),
        ("paragraph", "count(): How many there are."),
        ("code", "sub count { 0 }"),
        ("paragraph", "helper(): Not for you."),
        ("code", "sub helper { 1 }\n\n1;"),
    ]
