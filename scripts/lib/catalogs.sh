# Compiles the translations (po/LANG.po) into DIR/LANG/LC_MESSAGES/monkeycall.mo, the layout of
# share/locale: compile_catalogs ROOT DIR. Prints the files made, one a line.
compile_catalogs() {
    local root="$1" dir="$2" po language
    for po in "$root"/po/*.po; do
        [[ -e "$po" ]] || continue
        language="$(basename "$po" .po)"
        install -d "$dir/$language/LC_MESSAGES"
        msgfmt --check --output-file="$dir/$language/LC_MESSAGES/monkeycall.mo" "$po"
        chmod 644 "$dir/$language/LC_MESSAGES/monkeycall.mo"
        echo "$dir/$language/LC_MESSAGES/monkeycall.mo"
    done
}
