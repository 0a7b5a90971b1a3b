;;; tether-history.el --- The changes tether applied, and taking them back  -*- lexical-binding: t -*-

;; Copyright (C) 2026 tether contributors

;; This file is not part of GNU Emacs.

;;; Commentary:

;; tether records every change it applies in its journal: who asked,
;; which tool, and each file before and after.  `tether-history' lists
;; the project's changes, newest first, in a `tabulated-list-mode'
;; buffer; RET shows one as a unified diff, `u' takes it back.
;; `tether-undo' takes back a change by id, or the newest one not taken
;; back yet.  Both go through tether's `history' and `undo' tools, so an
;; undo lands in the open buffers as a versioned edit, one undo step
;; each, and on disk for the rest.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'seq)
(require 'subr-x)
(require 'tabulated-list)
(require 'tether)

(defvar tether-history-limit 100
  "How many changes `tether-history' lists.")

(defun tether--tool-json (conn tool arguments)
  "Run TOOL with ARGUMENTS (a plist) on CONN and wait; return its JSON answer.
A tool that fails signals `user-error' with its message."
  (let* ((result (jsonrpc-request
                  conn :workspace/executeCommand
                  (list :command "tether.callTool"
                        :arguments (vector (list :tool tool
                                                 :arguments (or arguments
                                                                (make-hash-table)))))
                  :timeout 60))
         (text (tether--result-text result)))
    (when (eq (plist-get result :isError) t)
      (user-error "tether: %s: %s" tool text))
    (if (string-prefix-p "{" (string-trim-left text))
        (json-parse-string text :object-type 'plist :array-type 'list
                           :null-object nil :false-object nil)
      text)))

(defun tether--history-time (rfc3339)
  "RFC3339, a journal time, as local time."
  (condition-case nil
      (format-time-string "%F %T" (date-to-time rfc3339))
    (error rfc3339)))

(defun tether--history-files (files)
  "FILES of a changeset in a few words."
  (mapconcat
   (lambda (f)
     (let ((path (plist-get f :path)))
       (pcase (plist-get f :op)
         ("edit" (format "%s +%s -%s" path (plist-get f :added) (plist-get f :removed)))
         ("rename" (format "%s -> %s" (plist-get f :from) path))
         (op (format "%s %s" op path)))))
   files ", "))

(defvar-local tether--history-conn nil "The connection a history buffer lists.")

(defvar tether-history-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'tether-history-show)
    (define-key map "u" #'tether-history-undo)
    map)
  "Keys of `tether-history-mode'.")

(define-derived-mode tether-history-mode tabulated-list-mode "tether history"
  "The changes tether applied to a project, newest first.
\\<tether-history-mode-map>\\[tether-history-show] shows a change as a diff, \
\\[tether-history-undo] takes it back, \\[revert-buffer] lists again.

\\{tether-history-mode-map}"
  (setq tabulated-list-format
        [("Time" 19 t) ("Who" 14 t) ("Tool" 13 t) ("Files" 50 nil) ("" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'tether--history-refresh nil t)
  (tabulated-list-init-header))

(defun tether--history-refresh ()
  "List the changes again."
  (let* ((answer (tether--tool-json tether--history-conn "history"
                                    (list :limit tether-history-limit)))
         (changesets (plist-get answer :changesets)))
    (setq tabulated-list-entries
          (mapcar
           (lambda (c)
             (list (plist-get c :id)
                   (vector (tether--history-time (plist-get c :time))
                           (or (plist-get c :client) "")
                           (plist-get c :tool)
                           (tether--history-files (plist-get c :files))
                           (cond ((plist-get c :undone_by)
                                  (format "undone by %s" (plist-get c :undone_by)))
                                 ((plist-get c :undoes)
                                  (format "undoes %s" (string-join (plist-get c :undoes) ", ")))
                                 (t "")))))
           changesets))))

;;;###autoload
(defun tether-history ()
  "List the changes tether applied to this project, newest first."
  (interactive)
  (let ((conn (tether--current-connection)))
    (with-current-buffer (get-buffer-create
                          (format "*tether history %s*"
                                  (abbreviate-file-name (tether--root conn))))
      (tether-history-mode)
      (setq tether--history-conn conn)
      (tether--history-refresh)
      (tabulated-list-print)
      (pop-to-buffer (current-buffer)))))

(defun tether--history-id ()
  "The id of the change at point."
  (or (tabulated-list-get-id) (user-error "tether: no change on this line")))

(defun tether-history-show ()
  "Show the change at point as a unified diff."
  (interactive)
  (let* ((id (tether--history-id))
         (answer (tether--tool-json tether--history-conn "history" (list :id id)))
         (c (plist-get answer :changeset)))
    (with-current-buffer (get-buffer-create (format "*tether change %s*" id))
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "tether change %s: %s by %s at %s%s\n\n"
                        id (plist-get c :tool) (or (plist-get c :client) "?")
                        (tether--history-time (plist-get c :time))
                        (if-let ((summary (plist-get c :summary)))
                            (concat ": " summary) ""))
                (or (plist-get answer :diff) "")))
      (diff-mode)
      (setq buffer-read-only t)
      (goto-char (point-min))
      (pop-to-buffer (current-buffer)))))

(defun tether--undo (conn arguments what &optional then)
  "Run tether's `undo' with ARGUMENTS on CONN, WHAT naming it in the echo area.
It runs while you go on editing; its edits reach the open buffers as
they come.  THEN, if given, is called after it, with no argument."
  (tether--call-async
   conn "undo" arguments
   (lambda (result)
     (message "tether: %s%s: %s" what
              (if (eq (plist-get result :isError) t) " failed" "")
              (car (split-string (tether--result-text result) "\n")))
     (when then (funcall then)))))

(defun tether-history-undo ()
  "Take back the change at point, after asking."
  (interactive)
  (let ((id (tether--history-id)))
    (when (y-or-n-p (format "Take back tether change %s? " id))
      (let ((buffer (current-buffer)))
        (tether--undo tether--history-conn (list :id id) (format "undo %s" id)
                      (lambda ()
                        ;; From a timer: this runs in jsonrpc's process filter, and the
                        ;; refresh asks the server again and waits for its answer.
                        (run-at-time 0 nil
                                     (lambda ()
                                       (when (buffer-live-p buffer)
                                         (with-current-buffer buffer (revert-buffer)))))))))))

;;;###autoload
(defun tether-undo (&optional id)
  "Take back tether's change ID, or the newest one not taken back yet.
Interactively, with a prefix argument, ask for the id."
  (interactive (list (and current-prefix-arg (read-string "tether change id: "))))
  (let ((conn (tether--current-connection)))
    (if (and id (not (string-empty-p id)))
        (tether--undo conn (list :id id) (format "undo %s" id))
      (let* ((answer (tether--tool-json conn "history" (list :limit tether-history-limit)))
             (newest (seq-find (lambda (c) (not (or (plist-get c :undone_by)
                                                    (plist-get c :undoes))))
                               (plist-get answer :changesets))))
        (unless newest
          (user-error "tether: nothing to take back among the newest %d changes"
                      tether-history-limit))
        (when (y-or-n-p (format "Take back %s's %s (%s)? "
                                (or (plist-get newest :client) "?")
                                (plist-get newest :tool)
                                (tether--history-files (plist-get newest :files))))
          (tether--undo conn (list :id (plist-get newest :id))
                        (format "undo %s" (plist-get newest :id))))))))

(provide 'tether-history)
;;; tether-history.el ends here
