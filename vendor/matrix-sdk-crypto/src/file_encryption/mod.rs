mod attachments;
mod key_export;

pub use attachments::{
    AttachmentDecryptor, AttachmentEncryptor, DecryptorError, MediaEncryptionInfo,
};
pub use key_export::{KeyExportError, decrypt_room_key_export, encrypt_room_key_export};
