#!/usr/bin/python3
"""Edits GNOME's built-in address book through libebook, as GNOME Contacts does.

  eds-contacts.py add NAME TEL...        prints the new contact's UID; a TEL may be TYPES:NUMBER (CELL, WORK,VOICE)
  eds-contacts.py edit UID NAME TEL...   replaces the name and numbers
  eds-contacts.py remove UID
  eds-contacts.py bulk COUNT FIRST       COUNT contacts "Bulk N", numbers +44 7700 FIRST+N
Connecting activates evolution-data-server on the session bus if it is not running.
"""
import sys
import gi
gi.require_version('EBook', '1.2')
gi.require_version('EDataServer', '1.2')
gi.require_version('EBookContacts', '1.2')
from gi.repository import EBook, EDataServer, EBookContacts

NO_WAIT = 0xFFFFFFFF  # do not wait for the backend to say it is "connected": a local book never does
NONE = EBookContacts.BookOperationFlags.NONE


def card(name, tels, uid=None):
    contact = EBookContacts.Contact.new()
    if uid:
        contact.set_property('id', uid)
    contact.set_property('full-name', name)
    attributes = []
    for tel in tels:
        attribute = EBookContacts.VCardAttribute.new(None, 'TEL')
        # TYPES:number gives the number its vCard types (CELL, WORK,VOICE), as GNOME Contacts does.
        types, colon, number = tel.rpartition(':')
        if colon and types.replace(',', '').isalpha():
            param = EBookContacts.VCardAttributeParam.new('TYPE')
            for value in types.split(','):
                param.add_value(value)
            attribute.add_param(param)
            tel = number
        attribute.add_value(tel)
        attributes.append(attribute)
    contact.set_attributes(EBookContacts.ContactField.TEL, attributes)
    return contact


registry = EDataServer.SourceRegistry.new_sync(None)
client = EBook.BookClient.connect_sync(registry.ref_builtin_address_book(), NO_WAIT, None)
command, args = sys.argv[1], sys.argv[2:]
if command == 'add':
    ok, uid = client.add_contact_sync(card(args[0], args[1:]), NONE, None)
    print(uid)
elif command == 'edit':
    client.modify_contact_sync(card(args[1], args[2:], uid=args[0]), NONE, None)
elif command == 'remove':
    client.remove_contact_by_uid_sync(args[0], NONE, None)
elif command == 'bulk':
    count, first = int(args[0]), int(args[1])
    contacts = [card('Bulk %d' % n, ['+44 7700 %06d' % (first + n)]) for n in range(count)]
    for start in range(0, count, 1000):
        client.add_contacts_sync(contacts[start:start + 1000], NONE, None)
    print(count)
else:
    sys.exit('unknown command ' + command)
